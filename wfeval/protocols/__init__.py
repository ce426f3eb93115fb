"""Protocols beyond open loop (docs/protocols.md): step-by-step rollouts, closed-loop control and
planning. Each protocol is one class (:class:`~wfeval.protocols.base.Protocol`: options, identity,
record, check, drive) in its own module and one config file ``conf/protocol/<name>.yaml`` naming
it; the pipeline builds it from the config like any plugin and knows no protocol by name.
"""
