"""Feature networks (I3D) and their weight loading."""
