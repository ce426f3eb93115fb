"""Small helpers every layer may use: hashing, thread pools, the allocator setting, progress display."""
