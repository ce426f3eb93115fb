"""The plan of one run: every object its config describes, built and checked before any work.

A fresh run plans the benchmark's requests and the model; ``run.from_run`` plans the stored
generations of another run instead (no benchmark, no model).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from wfeval.api import EvaluationProtocolSpec, GenerationRequest, GenerationResult, WorldTaskConfig
from wfeval.benchmarks.base import BenchmarkAdapter, BenchmarkScorer, scorer_of
from wfeval.config.errors import ConfigError
from wfeval.config.run_config import RunConfig
from wfeval.pipeline import build
from wfeval.pipeline.contract import OutputContract, build_contract
from wfeval.pipeline.metric_nodes import metric_nodes_with_rules
from wfeval.pipeline.model import ModelHandle
from wfeval.pipeline.nodes import node
from wfeval.pipeline.select import check_request_fits_task, iter_requests
from wfeval.pipeline.serve import ServeCheck
from wfeval.pipeline.spool import request_spool
from wfeval.pipeline.stored import StoredRunError, load_generations
from wfeval.results.record import RunManifest
from wfeval.protocols.base import ProtocolRun
from wfeval.protocols.drivers import Driver
from wfeval.results import MetricSet
from wfeval.results.document import DatasetHash
from wfeval.storage.artifacts import ArtifactStore
from wfeval.storage.metric_rows import metric_digest


@dataclass
class RunPlan:
    task: WorldTaskConfig
    protocol: EvaluationProtocolSpec
    metrics: MetricSet
    rules: dict[str, Any]
    benchmark_id: str
    benchmark_entry: dict[str, Any]  # what the manifest records of the benchmark
    model_entry: dict[str, Any]  # what the manifest records of the model
    benchmark: BenchmarkAdapter | None = None
    requests: Sequence[GenerationRequest] | None = None  # spooled on disk (pipeline/spool.py)
    model: ModelHandle | None = None
    source_run: str | None = None  # run.from_run: the run whose generations are re-scored
    source_pairs: Sequence[tuple[GenerationRequest, GenerationResult]] | None = None  # read lazily
    contract: OutputContract | None = None  # what the model's outputs must be (wfeval/pipeline/contract.py)
    metric_selection: dict[str, str] | None = None  # metric id -> the rule that selected it
    protocol_entry: dict[str, Any] | None = None  # what the manifest records of the protocol (wfeval.protocols)
    finalize: Callable[[list, ArtifactStore], list] | None = None  # closed loop / planning: replayed references
    recompute: frozenset[str] = frozenset()  # run.recompute: metrics whose rows no cache serves

    @property
    def scorer(self) -> BenchmarkScorer | None:
        """The benchmark family's mapping of results to the standard row (none when re-scoring)."""
        return scorer_of(self.benchmark) if self.benchmark is not None else None

    def manifest_entries(self) -> dict[str, Any]:
        metrics = {}
        for m_id, metric in self.metrics.items():
            aggregation = self.metrics.effective_aggregation(m_id)
            metrics[m_id] = {"version": str(metric.version),
                             "class": f"{type(metric).__module__}.{type(metric).__qualname__}",
                             "identity": metric_digest(metric),  # a resume keeps rows only of the same code
                             "aggregator": aggregation.aggregator if aggregation else None,
                             "statistics": list(aggregation.statistics) if aggregation else []}
            node = self.metrics.node_of.get(m_id, m_id)
            if node != m_id:  # one of several measurements of the config node metric.<node>
                metrics[m_id]["node"] = node
        return {"benchmark": self.benchmark_entry, "model": self.model_entry, "rules": self.rules,
                "metrics": metrics, "source_run": self.source_run, "protocol": self.protocol_entry,
                "metric_selection": self.metric_selection}


def plan_run(cfg: RunConfig, store: ArtifactStore, spool_dir: Path | None = None) -> RunPlan:
    task, protocol, driver = build.build_task(cfg), build.build_protocol(cfg), build.build_protocol_class(cfg)
    setting = ProtocolRun(protocol, task, policy=cfg.section("policy") if driver.uses_policy else None)
    driver.check_task(setting)
    nodes, selection = metric_nodes_with_rules(cfg)
    metrics = build.build_metrics(nodes, device=cfg.run.device)
    selection = measurement_rules(metrics, selection)
    recompute = cfg.run.recompute_of(metrics)
    for metric_id in recompute:  # FVD: its features and reference statistics too
        if callable(force := getattr(metrics[metric_id], "force_recompute", None)):
            force()
    if cfg.run.from_run:
        return dataclasses.replace(_plan_rescore(cfg, task, protocol, metrics, store), metric_selection=selection,
                                   recompute=recompute)
    bench = build.build_benchmark(cfg)
    try:
        contract = build_contract(cfg.section("model"), task)
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc
    handle = build.build_model(cfg)
    # every sample prepared once, checked and hashed as it comes, and spooled to disk (pipeline/spool.py)
    requests, digest, serves = request_spool(spool_dir), DatasetHash(), ServeCheck(handle.model)
    for request in iter_requests(bench, store=store, task=task, protocol=protocol, limit=cfg.run.limit,
                                       shard=cfg.run.shard):
        check_request_fits_task(request, task)
        digest.add(request)
        serves.add(request)
        requests.append(request)
    serves.check(bench.spec.benchmark_id, model_choice=cfg.job.choice("model"))
    for metric in metrics.values():  # idm_accuracy on a dataset: its IDM learns from the training episodes
        if callable(bind := getattr(metric, "bind_benchmark", None)):
            bind(bench, store)
    setting = dataclasses.replace(setting, extra={**setting.extra, "requests": requests})  # what a protocol may draw from
    model = drive(cfg, driver, setting, handle, bench, store)  # the protocol's driver around the model
    contract = dataclasses.replace(contract, required_keys=driver.output_keys(handle.model, contract.required_keys))
    model_entry = model.manifest_entry()
    if contract.output_range:  # float outputs are converted: say so wherever the results go
        model_entry.update(output_range=list(contract.output_range),
                           output_conversion=contract.describe()["conversion"])
    benchmark_entry = {"id": bench.spec.benchmark_id, "version": bench.spec.version,
                       "fingerprint": bench.fingerprint(), "n_samples": len(requests),
                       "dataset_hash": digest.hexdigest(), "metrics": [m.id for m in bench.spec.metrics]}
    if getattr(bench.spec, "action_space", None) is not None:  # declared (continuous) only: others unchanged
        benchmark_entry["action_space"] = bench.spec.action_space.to_dict()
    return RunPlan(task=task, protocol=protocol, metrics=metrics, rules=build.benchmark_rules(cfg),
                   benchmark_id=bench.spec.benchmark_id, benchmark_entry=benchmark_entry,
                   model_entry=model_entry, benchmark=bench, requests=requests, model=model, contract=contract,
                   protocol_entry=driver.record(setting), metric_selection=selection,
                   finalize=getattr(model.model, "finalize", None), recompute=recompute)


def measurement_rules(metrics: MetricSet, rules: Mapping[str, str]) -> dict[str, str]:
    """The rule that selected each measurement: its own (a resumed run's record), else its config
    node's (``imagined_probe_r2`` selects ``imagined_probe_r2_k1`` …)."""
    out = {}
    for m in metrics:
        rule = rules.get(m, rules.get(metrics.node_of.get(m, m)))
        if rule is not None:
            out[m] = rule
    return out


def drive(cfg: RunConfig, protocol: Any, setting: ProtocolRun, handle: ModelHandle, bench: BenchmarkAdapter,
          store: ArtifactStore) -> ModelHandle:
    """The model handle generation calls: what the protocol drives (the model itself under open loop,
    else a driver around it), under a key that adds the protocol's identity (protocols never share
    generations)."""
    protocol.check(handle.model, bench)
    policy_node = node(cfg, "policy")
    policy = build.instantiate_node("policy", policy_node) if protocol.uses_policy and policy_node is not None else None
    driven = protocol.drive(handle.model, bench, store, setting, policy=policy)
    identity, chosen = protocol.identity(setting), driven.choices() if isinstance(driven, Driver) else {}
    return handle.with_protocol(driven, {**(identity or {}), "chosen": chosen} if chosen else identity)


def _plan_rescore(cfg: RunConfig, task: WorldTaskConfig, protocol: EvaluationProtocolSpec,
                  metrics: MetricSet, store: ArtifactStore | None = None) -> RunPlan:
    source_dir = Path(cfg.run.from_run).expanduser().resolve()
    try:
        pairs, source = load_generations(source_dir)
    except StoredRunError as exc:
        raise ConfigError(str(exc)) from exc
    _bind_source_dataset(metrics, source_dir, source, store)
    benchmark_id = source.benchmark_info.id
    # the current config's rules when it names the source's benchmark (so a re-score can apply a
    # new scorecard or evidence rule), else the rules the source run recorded
    same = str((cfg.section("benchmark") or {}).get("name", "")) == benchmark_id
    rules: Mapping[str, Any] = build.benchmark_rules(cfg) if same else (source.rules or {})
    return RunPlan(task=task, protocol=protocol, metrics=metrics, rules=dict(rules), benchmark_id=benchmark_id,
                   benchmark_entry=source.benchmark_info.to_dict(), model_entry=source.model_info.to_dict(),
                   source_run=str(Path(cfg.run.from_run).resolve()), source_pairs=pairs,
                   protocol_entry=source.protocol_info.to_dict())


def _bind_source_dataset(metrics: MetricSet, source_dir: Path, source: RunManifest,
                         store: ArtifactStore | None) -> None:
    """Re-scoring a dataset run with a metric that learns from the benchmark (``idm_accuracy``: its IDM
    trains on the dataset's training episodes): the source run's dataset reader, rebuilt from the
    benchmark node its ``.hydra/config.yaml`` records (only a built-in episode reader, whose fingerprint
    must still be the one the run recorded), is bound as a fresh run binds it."""
    import json

    from omegaconf import OmegaConf

    from wfeval.benchmarks.episodes import reader_targets

    binders = [m for m in metrics.values() if callable(getattr(m, "bind_benchmark", None))]
    config = source_dir / ".hydra" / "config.yaml"
    if not binders or not config.is_file():
        return
    try:  # read as data: only a target of wfeval's own dataset readers is built
        recorded = OmegaConf.to_container(OmegaConf.load(config).get("benchmark") or {}, resolve=True)
    except Exception as exc:  # noqa: BLE001 - OmegaConf's own error types
        raise ConfigError(f"run.from_run: cannot read the benchmark {config} records ({exc})") from None
    target = str(recorded.get("_target_", "")) if isinstance(recorded, dict) else ""
    if target not in reader_targets():
        return  # a simulator's samples name their own shipped IDM; a dataset folder has no episodes to learn
    special = [k for k in _keys(recorded) if k != "._target_" and (last := k.rsplit(".", 1)[-1]).startswith("_")
               and last.endswith("_")]
    if special:  # a run folder is a file anyone could have written: no other code is built from it
        raise ConfigError(f"run.from_run: {config} records benchmark{special[0]}, which a dataset reader never has; "
                          "nothing is built from it")
    bench = build.build_benchmark(OmegaConf.create({"benchmark": recorded}))
    was = source.benchmark_info.fingerprint
    now = json.loads(json.dumps(bench.fingerprint(), default=str))
    if was is not None and now != was:
        changed = sorted(k for k in {*was, *now} if was.get(k) != now.get(k))
        raise ConfigError(f"run.from_run: the dataset {recorded.get('dataset_root')} is not what {source_dir} read "
                          f"(its fingerprint differs in {', '.join(changed)}); a metric that learns from it "
                          f"({', '.join(type(m).__name__ for m in binders)}) would learn from other data: "
                          "run the evaluation again instead")
    for metric in binders:
        metric.bind_benchmark(bench, store)


def _keys(node: Any, prefix: str = "") -> list[str]:
    """Every key of a nested mapping (``.a.b``), lists included."""
    out: list[str] = []
    items = node.items() if isinstance(node, Mapping) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        out.append(f"{prefix}.{key}")
        out += _keys(value, f"{prefix}.{key}")
    return out

