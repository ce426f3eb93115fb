"""wfeval on a realistic workload against the script a competent user would write, side by side.

Run: ``python perf/realistic_run.py [--work DIR] [--samples 64] [--skip-bootstrap-timing] [--device auto]
[--burners 0]``

The workload is built with the project's own commands: 64 samples of real Atari Pong frames at
256×256 exported as h264 videos (``python -m wfeval.export_dataset ... benchmark=atari_pong
'benchmark.resize=[256,256]' --video-format mp4``), and, as the model's output, each reference
shifted by two pixels with sensor-like noise (σ = 4 levels) written as h264 too (``model=precomputed``).
Measured, one after the other in this process (same machine state, so the ratios are what counts):

* **bare**: PyAV decode, scikit-image PSNR/SSIM per frame (Gaussian σ=1.5, population covariance),
  numpy flicker, the same I3D (wfeval's network, batch 8, on ``--device``), scipy ``sqrtm`` Fréchet — no interval;
* **wfeval cold**: ``python -m wfeval benchmark=folder ... model=precomputed metric=[psnr,ssim,flicker,fvd]``
  on an empty store and an empty feature cache (FVD with its default 1000-resample bootstrap;
  ``run.device=<--device>`` unless ``--device auto``, the run's own default);
* **wfeval warm**: the same command again, new run folder, same store;

(``--burners N``: N CPU burners, ``python -c "while True: pass"``, beside the three timed commands;
one per core for the loaded measurement), then peak RSS and CPU time (user + system) of each, store
bytes per sample against the raw arrays (this workload and the default gridworld run; a dataset's
files are read in place, not stored), the cost of reading a reference from its file against reading
a stored copy, the integrity check per object, and the FVD bootstrap time at N = 256, 1024, 2048
(synthetic 400-d features, 1000 resamples) against the former implementation (resampled sets copied,
extrapolated from a few resamples). Results land in ``<work>/report.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BARE = textwrap.dedent('''
    import json, sys, time
    from pathlib import Path
    import av, numpy as np
    from scipy import linalg
    from skimage.metrics import peak_signal_noise_ratio, structural_similarity

    data, gen_root, device = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]

    def decode(path):
        with av.open(str(path)) as c:
            return np.stack([f.to_ndarray(format="rgb24") for f in c.decode(video=0)])

    rows = [json.loads(l) for l in (data / "manifest.jsonl").read_text().splitlines() if l.strip()]
    psnr, ssim, flicker, real, fake = [], [], [], [], []
    for row in rows:
        ref = decode(data / row["reference_video"])
        gen = decode(gen_root / (row["sample_id"] + ".mp4"))
        pairs = list(zip(ref[1:], gen[1:]))  # the first frame is the context frame the model was given
        psnr.append(np.mean([min(peak_signal_noise_ratio(r, g, data_range=255), 100.0) for r, g in pairs]))
        ssim.append(np.mean([structural_similarity(r, g, gaussian_weights=True, sigma=1.5, use_sample_covariance=False,
                                                   data_range=255, channel_axis=-1) for r, g in pairs]))
        flicker.append(1.0 - np.mean(np.abs(np.diff(gen.astype(np.float64), axis=0)).mean(axis=(1, 2, 3))) / 255.0)
        real.append(ref[:16]); fake.append(gen[:16])

    from wfeval.features.extractor import I3DExtractor
    from wfeval.features.preprocess import ClipRecipe
    from wfeval.features.weights import resolve_weights
    import torch
    from wfeval.features.extractor import to_network_input
    from wfeval.features.network import pick_device
    net = I3DExtractor(resolve_weights("auto"), ClipRecipe(16, "first", 0, 224, "bilinear"), device=str(pick_device(device)),
                       batch_size=8)

    def features(clips):  # the network itself, batches of 8, torch's default threading
        with torch.inference_mode():
            return np.concatenate([net.network(to_network_input(np.stack(clips[i:i + 8]), net.recipe, net.device)).cpu().numpy()
                                   for i in range(0, len(clips), 8)]).astype(np.float64)

    f1, f2 = features(real), features(fake)
    m1, m2 = f1.mean(0), f2.mean(0)
    c1, c2 = np.cov(f1, rowvar=False, ddof=0), np.cov(f2, rowvar=False, ddof=0)
    covmean = linalg.sqrtm(c1 @ c2).real
    fvd = float(((m1 - m2) ** 2).sum() + np.trace(c1 + c2 - 2 * covmean))
    print(json.dumps({"psnr": float(np.mean(psnr)), "ssim": float(np.mean(ssim)), "flicker": float(np.mean(flicker)),
                      "fvd": fvd, "n": len(rows)}))
''')


CPU_SECONDS: list[float] = []  # user + system time of each command timed() ran, in order


def timed(argv: list[str], env: dict | None = None, cwd: Path | None = None) -> tuple[float, float, str]:
    """Wall time, peak RSS (MB, from the kernel's accounting of this child alone) and stdout."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd, text=True)
    # read the pipes without waiting on the child (os.wait4 must reap it to get its own rusage)
    import threading

    chunks: dict[str, list[str]] = {"out": [], "err": []}

    def pump(stream, key):
        chunks[key].append(stream.read())

    threads = [threading.Thread(target=pump, args=(proc.stdout, "out")),
               threading.Thread(target=pump, args=(proc.stderr, "err"))]
    for t in threads:
        t.start()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    for t in threads:
        t.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:6])} ... failed ({proc.returncode}):\n{''.join(chunks['err'])[-3000:]}")
    CPU_SECONDS.append(usage.ru_utime + usage.ru_stime)
    return seconds, usage.ru_maxrss / 1024.0, "".join(chunks["out"])


def build_workload(work: Path, samples: int, env: dict) -> tuple[Path, Path]:
    data, gen = work / "pong256", work / "generated"
    if not (data / "manifest.jsonl").is_file():
        trajectories = max(1, samples // 4)
        subprocess.run([sys.executable, "-m", "wfeval.export_dataset", str(data), "benchmark=atari_pong",
                        f"benchmark.num_trajectories={trajectories}", "benchmark.resize=[256,256]",
                        "--video-format", "mp4", "--force"], check=True, env={**env, "WFEVAL_STORE": str(work / "export_store")},
                       stdout=subprocess.DEVNULL)
    if not gen.is_dir():
        from wfeval.io import read_video, write_video

        gen.mkdir()
        rng = np.random.default_rng(0)
        for line in (data / "manifest.jsonl").read_text().splitlines():
            row = json.loads(line)
            ref = read_video(data / row["reference_video"]).frames.astype(np.float64)
            noisy = np.roll(ref, 2, axis=2) + rng.normal(0.0, 4.0, ref.shape)
            write_video(gen / f"{row['sample_id']}.mp4", np.clip(noisy, 0, 255).astype(np.uint8), fps=15.0)
    return data, gen


def wfeval_argv(data: Path, gen: Path, run_dir: Path, features: Path, device: str = "auto") -> list[str]:
    return [sys.executable, "-m", "wfeval", "benchmark=folder", f"benchmark.dataset_root={data}",
            "model=precomputed", f"model.root={gen}", "metric=[psnr,ssim,flicker,fvd]",
            f"metric.fvd.feature_dir={features}", f"hydra.run.dir={run_dir}", "run.progress=off",
            *([f"run.device={device}"] if device != "auto" else [])]


def headline(run_dir: Path) -> dict[str, float]:
    results = json.loads((run_dir / "results.json").read_text())["results"]
    out = {}
    for key, agg in results.items():
        name = key.rsplit(".", 1)[-1]
        out[name] = agg["raw_stats"]["fvd"] if name == "fvd" else agg["raw_stats"]["mean"]
    return out


def bootstrap_timing(sizes=(256, 1024, 2048), resamples: int = 1000, former_resamples: int = 5) -> list[dict]:
    from wfeval.stats.frechet import _fd_features, bootstrap_frechet

    rng = np.random.default_rng(0)
    rows = []
    for n in sizes:
        x1 = rng.standard_normal((n, 400)) @ rng.standard_normal((400, 400)) * 0.1
        x2 = rng.standard_normal((n, 400)) @ rng.standard_normal((400, 400)) * 0.1 + 0.05
        units = np.arange(n)
        started = time.perf_counter()
        bootstrap_frechet(x1, x2, n_resamples=resamples, units1=units, units2=units)
        new = time.perf_counter() - started
        draw = np.random.default_rng(1)
        started = time.perf_counter()
        for _ in range(former_resamples):  # the former implementation: copy each resampled set
            counts = np.bincount(draw.integers(0, n, n), minlength=n)
            _fd_features(np.repeat(x1, counts, axis=0), np.repeat(x2, counts, axis=0), 0)
        former = (time.perf_counter() - started) / former_resamples * resamples
        rows.append({"n": n, "resamples": resamples, "seconds": round(new, 2),
                     "former_seconds_extrapolated": round(former, 1), "speedup": round(former / new, 1)})
        print(f"  bootstrap N={n:5d}: {new:7.1f} s for {resamples} resamples (former: ~{former:7.1f} s, "
              f"{former / new:5.1f}x)", flush=True)
    return rows


def store_ratio(store: Path, samples: int, runs: list[Path] = ()) -> dict:
    """Objects on disk per sample against the raw arrays the run uses (what the former store held:
    the stored objects decoded, plus the dataset files ``runs`` read in place, decoded)."""
    from wfeval.storage.usage import du

    with open(os.devnull, "w") as sink:
        report = du(store, list(runs), out=sink)
    raw = report["decoded_bytes"] + report["dataset_files_decoded_bytes"]
    records = sum(report[name]["bytes"] for name in ("generations", "results", "decoded"))
    return {"objects": report["objects"], "bytes": report["bytes"], "raw_bytes": raw,
            "dataset_files_read_in_place": report["dataset_files"], "record_bytes": records,
            "bytes_per_sample": report["bytes"] / samples, "raw_bytes_per_sample": raw / samples,
            "ratio": report["bytes"] / raw if raw else None}


def reference_read_cost(run_dir: Path) -> dict:
    """Reading one reference read in place (decode + content check) against reading the same array
    from a zstd object (what the former store did), and the cheap check of run.verify_artifacts."""
    from wfeval.api import ArtifactRef
    from wfeval.storage.artifacts import FILE_MEDIA_TYPE, ArtifactStore, check_object, read_array

    first = json.loads((run_dir / "generations.jsonl").read_text().splitlines()[0])
    ref = ArtifactRef.from_dict(first["request"]["references"]["video"])
    if ref.media_type != FILE_MEDIA_TYPE:
        return {"note": "references are copied objects"}
    with tempfile.TemporaryDirectory() as tmp:
        copy = ArtifactStore(tmp).put_array(read_array(ref), kind="video")
        timings = {}
        for label, fn in (("file_read_verified", lambda: read_array(ref)),
                          ("file_read", lambda: read_array(ref, verify=False)),
                          ("file_check_object", lambda: check_object(ref)),
                          ("object_read_verified", lambda: read_array(copy))):
            fn()
            started = time.perf_counter()
            for _ in range(10):
                fn()
            timings[label] = round((time.perf_counter() - started) / 10 * 1000, 2)
    return {"file_bytes": Path(ref.uri).stat().st_size, "decoded_bytes": int(np.prod(ref.shape)), **timings}


def integrity_cost(store: Path) -> dict:
    from wfeval.storage.artifacts import check_object, read_array
    from wfeval.storage.usage import objects

    obj = max(objects(store), key=lambda o: o.size)
    ref = ArtifactRefFor(store, obj.sha256)
    timings = {}
    for label, fn in (("read", lambda: read_array(ref, verify=False)), ("read_verified", lambda: read_array(ref)),
                      ("check_object", lambda: check_object(ref))):
        fn()
        started = time.perf_counter()
        for _ in range(20):
            fn()
        timings[label] = (time.perf_counter() - started) / 20 * 1000
    return {"object_bytes": obj.size, "decoded_bytes": obj.decoded_size(),
            "read_ms": round(timings["read"], 2), "read_verified_ms": round(timings["read_verified"], 2),
            "verify_cost_ms": round(timings["read_verified"] - timings["read"], 2),
            "check_object_ms": round(timings["check_object"], 2)}


def ArtifactRefFor(store: Path, sha: str):  # noqa: N802 - a ref of an existing object
    from wfeval.storage.artifacts import ArtifactStore

    return ArtifactStore(store).ref_of(sha, kind="video", shape=(), dtype="uint8")


def timed_runs(args, work: Path, data: Path, gen: Path, env: dict, run_env: dict, script: Path) -> dict:
    """The bare script, wfeval cold and wfeval warm, one after the other: times, CPU, peak RSS, numbers."""
    print(f"  load average {os.getloadavg()[0]:.1f} ({args.burners} CPU burners)", flush=True)
    bare_s, bare_rss, bare_out = timed([sys.executable, str(script), str(data), str(gen), args.device], env=env)
    bare = json.loads(bare_out.strip().splitlines()[-1])
    print(f"  bare script   {bare_s:7.1f} s  CPU {CPU_SECONDS[-1]:6.1f} s  peak RSS {bare_rss:6.0f} MB", flush=True)
    cold_s, cold_rss, _ = timed(wfeval_argv(data, gen, work / "run_cold", work / "features", args.device), env=run_env)
    print(f"  wfeval cold   {cold_s:7.1f} s  CPU {CPU_SECONDS[-1]:6.1f} s  peak RSS {cold_rss:6.0f} MB  "
          f"({cold_s / bare_s:.2f}x bare)", flush=True)
    warm_s, warm_rss, _ = timed(wfeval_argv(data, gen, work / "run_warm", work / "features", args.device), env=run_env)
    print(f"  wfeval warm   {warm_s:7.1f} s  CPU {CPU_SECONDS[-1]:6.1f} s  peak RSS {warm_rss:6.0f} MB  "
          f"({warm_s / cold_s:.2f}x cold)", flush=True)
    ours = headline(work / "run_cold")
    return dict(
        seconds={"bare": round(bare_s, 2), "cold": round(cold_s, 2), "warm": round(warm_s, 2)},
        ratios={"cold_over_bare": round(cold_s / bare_s, 3), "warm_over_cold": round(warm_s / cold_s, 3)},
        targets={"cold_over_bare": 0.6, "warm_over_cold": 0.2},
        cpu_seconds=dict(zip(("bare", "cold", "warm"), (round(c, 2) for c in CPU_SECONDS[-3:]))),
        peak_rss_mb={"bare": round(bare_rss), "cold": round(cold_rss), "warm": round(warm_rss)},
        numbers={"bare": bare, "wfeval": ours, "warm_equals_cold": headline(work / "run_warm") == ours},
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", default=None, help="work folder (default: a new temporary folder)")
    parser.add_argument("--samples", type=int, default=64)
    parser.add_argument("--skip-bootstrap-timing", action="store_true")
    parser.add_argument("--device", default="auto", help="where I3D and the metrics run, for both sides (auto: cuda "
                        "when present, else cpu)")
    parser.add_argument("--burners", type=int, default=0, help="CPU burners running beside the timed commands "
                        "(one per core: the loaded measurement)")
    args = parser.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="wfeval_realistic_")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    env.pop("WFEVAL_STORE", None)
    print(f"work folder {work}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", flush=True)
    data, gen = build_workload(work, args.samples, env)
    n = sum(1 for line in (data / "manifest.jsonl").read_text().splitlines() if line.strip())
    report: dict = {"samples": n, "cpus": os.cpu_count(), "device": args.device, "load_before": os.getloadavg()}
    for name in ("store", "features", "run_cold", "run_warm", "run_gridworld"):  # every run from scratch
        if (work / name).exists():
            import shutil

            shutil.rmtree(work / name)
    run_env = {**env, "WFEVAL_STORE": str(work / "store")}
    script = work / "bare.py"
    script.write_text(BARE)
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.burners)]
    try:
        report.update(timed_runs(args, work, data, gen, env, run_env, script))
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    report["load_after"] = os.getloadavg()
    ours = report["numbers"]["wfeval"]
    for key in ("psnr", "ssim", "flicker", "fvd"):
        print(f"  {key:8s} wfeval {ours.get(key)!r:24}  bare {report['numbers']['bare'][key]!r}", flush=True)
    report["store"] = store_ratio(work / "store", n, [work / "run_cold"])
    print(f"  store: {report['store']['bytes_per_sample'] / 1e3:.1f} KB per sample vs "
          f"{report['store']['raw_bytes_per_sample'] / 1e3:.1f} KB raw arrays "
          f"(ratio {report['store']['ratio']:.4f}, target <= 0.5; "
          f"{report['store']['dataset_files_read_in_place']} dataset files read in place, "
          f"{report['store']['record_bytes'] / n / 1e3:.1f} KB of records per sample)", flush=True)
    report["reference_read"] = reference_read_cost(work / "run_cold")
    print(f"  reading a reference read in place: {report['reference_read']}", flush=True)
    gw_store = work / "gridworld_store"
    if gw_store.exists():
        import shutil

        shutil.rmtree(gw_store)
    timed([sys.executable, "-m", "wfeval", "model=static", f"hydra.run.dir={work / 'run_gridworld'}", "run.progress=off"],
          env={**env, "WFEVAL_STORE": str(gw_store)})
    report["gridworld_store"] = store_ratio(gw_store, 32)
    print(f"  gridworld store: {report['gridworld_store']['bytes_per_sample'] / 1e3:.1f} KB per sample vs "
          f"{report['gridworld_store']['raw_bytes_per_sample'] / 1e3:.1f} KB raw "
          f"(ratio {report['gridworld_store']['ratio']:.4f}, target <= 0.1)", flush=True)
    report["integrity_check"] = integrity_cost(work / "store")
    print(f"  integrity check of the largest object: {report['integrity_check']}", flush=True)
    if not args.skip_bootstrap_timing:
        report["bootstrap"] = bootstrap_timing()
    (work / "report.json").write_text(json.dumps(report, indent=2))
    print(f"report: {work / 'report.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
