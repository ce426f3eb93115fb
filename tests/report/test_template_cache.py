"""The report template's compiled code is kept per template text and settings, and a kept entry renders
what a fresh compilation renders (wfeval/report/html/template_cache.py)."""

from __future__ import annotations

import jinja2
import pytest

from wfeval.report.html import template_cache

SOURCE = "{% for x in items %}\n  <b>{{ x | wbr }}</b>\n{% endfor %}{{ title }}"
CONTEXT = {"items": ["a_b.c", "<i>"], "title": "t & u"}


def _env(**settings) -> jinja2.Environment:
    env = jinja2.Environment(**{"autoescape": True, "undefined": jinja2.StrictUndefined, "trim_blocks": True,
                                "lstrip_blocks": True, **settings})
    env.filters["wbr"] = lambda text: f"[{text}]"
    return env


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("WFEVAL_CACHE", str(tmp_path))
    return tmp_path / "templates"


def _compiles(env: jinja2.Environment) -> list[str]:
    calls: list[str] = []
    compile_ = env.compile
    env.compile = lambda source, *a, **k: calls.append(source) or compile_(source, *a, **k)  # type: ignore
    return calls


def test_a_kept_template_renders_what_a_fresh_compilation_renders_without_compiling(cache):
    fresh = _env().from_string(SOURCE).render(**CONTEXT)
    first_env = _env()
    first = template_cache.from_source(first_env, SOURCE, "t")
    assert first.render(**CONTEXT) == fresh == "  <b>[a_b.c]</b>\n  <b>[&lt;i&gt;]</b>\nt &amp; u"
    assert len(list(cache.glob("t-*.code"))) == 1
    env = _env()
    calls = _compiles(env)
    assert template_cache.from_source(env, SOURCE, "t").render(**CONTEXT) == fresh and calls == []


def test_another_text_or_setting_compiles_again_and_keeps_its_own_entry(cache):
    template_cache.from_source(_env(), SOURCE, "t")
    for env, source in ((_env(), SOURCE + "!"), (_env(trim_blocks=False), SOURCE), (_env(autoescape=False), SOURCE)):
        calls = _compiles(env)
        rendered = template_cache.from_source(env, source, "t").render(**CONTEXT)
        assert calls == [source] and rendered == env.from_string(source).render(**CONTEXT)
    assert len(list(cache.glob("t-*.code"))) == 4


def test_a_corrupt_or_foreign_entry_is_compiled_again_and_an_unwritable_cache_costs_only_time(cache, tmp_path,
                                                                                                monkeypatch):
    template_cache.from_source(_env(), SOURCE, "t")
    (kept,) = cache.glob("t-*.code")
    good = kept.read_bytes()
    for damaged in (good[:-1] + bytes([good[-1] ^ 1]), b"", b"x" * 40):
        kept.write_bytes(damaged)
        env = _env()
        calls = _compiles(env)
        assert template_cache.from_source(env, SOURCE, "t").render(**CONTEXT) == _env().from_string(SOURCE).render(
            **CONTEXT) and calls == [SOURCE]
    blocked = tmp_path / "file"
    blocked.write_text("")
    monkeypatch.setenv("WFEVAL_CACHE", str(blocked))  # <cache>/templates cannot be made
    assert template_cache.from_source(_env(), SOURCE, "t").render(**CONTEXT).endswith("t &amp; u")


def test_the_cache_keeps_its_newest_entries_only(cache):
    for n in range(template_cache.KEEP + 3):
        template_cache.from_source(_env(), SOURCE + "x" * n, "t")
    assert len(list(cache.glob("*.code"))) == template_cache.KEEP
