"""Everything wfeval keeps on disk, one module per kind (the folder names in :mod:`.layout`).

- :mod:`.artifacts` — the content-addressed object store and dataset files read in place;
- :mod:`.decoded` — decoded dataset files by content; :mod:`.recordings` — recorded trajectories;
- :mod:`.generations` — finished generations by (model identity, request);
- :mod:`.metric_rows` — per-sample metric rows by (metric identity, content read);
- :mod:`.features` — I3D feature vectors and reference statistics;
- :mod:`.seal` — the seal every record above carries, keyed by the store's ``seal.key``, checked on read;
- :mod:`.rundir` — the files of one run folder; :mod:`.usage` — what the store holds, and pruning.
"""
