"""Adapters from other world-model libraries to wfeval's latent and step interfaces (docs/peer-models.md).

One module per library, each one class wrapping a model the user built (and loaded weights into)
with the library itself: ``torch_world`` (torch-world's JEPA zoo: LeWM, DINO-WM, any of its
``WorldModel``), ``stable_worldmodel`` (stable-worldmodel's LeWM and PLDM), ``simulusion``
(simulusion's ``WorldModel`` protocol: Dreamer, IRIS, DIAMOND, ...). The libraries are imported
by the user's code, never here at import time: an adapter only calls the model it is given.
"""
