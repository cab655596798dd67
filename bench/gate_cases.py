"""The regression gate's cases: the engine's hot paths in-process, without a server.

Run by scripts/perf_gate.py, twice: under ``valgrind --tool=callgrind`` (instructions,
which a loaded machine does not change) and natively (CPU seconds of the process and
of any child it starts, the best of ``--repeat`` runs: what instructions cannot see,
such as work moved into the kernel or into child processes -- a fork per yaql
evaluation). Every case is set up first (imports, template text), then each one
runs between two calls of ``os.getpgrp()``, which the callgrind run uses as dump points
(``--dump-before=getpgrp``), so each case's instructions are counted alone; a child
process writes its own callgrind file, which the case is charged with too.

    python bench/gate_cases.py --list
    python bench/gate_cases.py --markers DIR        # the callgrind run
    python bench/gate_cases.py --cpu --repeat 5     # prints {case: cpu_s}

Why these cases: template parsing and function resolution run for every stack action;
the yaql chain is issue 26's regression (a fork per evaluation made it 10x slower); the
dependency graph of 1,000 resources is built and walked for every create and delete.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kiln.graph import Graph
from kiln.graph.walk import Frontier
from kiln.template import load_template
from tests.unit.template.tplhelpers import IDENTITY, FakeResolver

N = 1000
YAQL_CHAIN = 100


def _template_text() -> str:
    """A 1,000-resource HOT template using the common functions, as YAML text."""
    lines = ["heat_template_version: 2018-08-31",
             "parameters:",
             "  prefix: {type: string, default: web}",
             "  ports: {type: comma_delimited_list, default: '80,443'}",
             "resources:"]
    for i in range(N):
        depends = f"\n    depends_on: [r{i - 1}]" if i % 10 else ""
        lines.append(f"""  r{i}:
    type: OS::Heat::Value{depends}
    properties:
      value:
        str_replace:
          template: $prefix-$index-$port
          params:
            $prefix: {{get_param: prefix}}
            $index: {{list_join: ['-', ['n', '{i}']]}}
            $port: {{get_param: [ports, 0]}}""")
    return "\n".join(lines) + "\n"


TEXT = _template_text()


def parse() -> Any:
    return load_template(TEXT)


PARSED = parse()


def resolve() -> None:
    bound = PARSED.bind(user_params={}, identity=IDENTITY, resolver=FakeResolver())
    for definition in bound.resource_definitions().values():
        bound.resolve(definition.properties)


YAQL = load_template({"heat_template_version": "2018-08-31", "outputs": {
    f"o{i}": {"value": {"yaql": {"expression": "int($.data) + 1", "data": str(i)}}}
    for i in range(YAQL_CHAIN)}})


def yaql_chain() -> None:
    bound = YAQL.bind(user_params={}, identity=IDENTITY, resolver=FakeResolver())
    for i in range(YAQL_CHAIN):
        assert bound.resolve(bound.template.outputs[f"o{i}"].value) == i + 1


DEPS = {f"r{i}": [f"r{j}" for j in (i - 1, i // 2, i - 10) if 0 <= j < i] for i in range(N)}


def graph_walk() -> None:
    graph = Graph.from_edges(list(DEPS), DEPS)
    graph.check_acyclic()
    frontier = Frontier(graph)
    ready = frontier.ready()
    while ready:
        node = ready.pop()
        frontier.start(node)
        ready.extend(frontier.succeeded(node))
    assert frontier.finished
    graph.reversed().topological_order()


CASES: dict[str, Callable[[], Any]] = {
    "template_parse_1000": parse,
    "function_resolution_1000": resolve,
    "yaql_chain_100": yaql_chain,
    "dependency_graph_1000": graph_walk,
}


def _warm() -> None:
    """yaql is imported on first use: import it (and build its parser) before measuring."""
    bound = YAQL.bind(user_params={}, identity=IDENTITY, resolver=FakeResolver())
    bound.resolve(bound.template.outputs["o0"].value)


def _cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--markers", type=Path, metavar="DIR",
                        help="mark each case for callgrind; say which files in DIR (one per "
                             "child process) each case's children wrote")
    parser.add_argument("--cpu", action="store_true")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if args.list:
        print(json.dumps(list(CASES)))
        return
    _warm()
    if args.markers:
        children: dict[str, list[str]] = {}
        for name, run in CASES.items():
            before = set(os.listdir(args.markers))
            os.getpgrp()  # dump point: what came before is not this case's
            run()
            os.getpgrp()
            children[name] = sorted(set(os.listdir(args.markers)) - before
                                    - {f for f in os.listdir(args.markers)
                                       if f.startswith(f"cg.{os.getpid()}")})
        print(json.dumps(children))
        return
    best: dict[str, float] = {}
    for _ in range(args.repeat):
        for name, run in CASES.items():
            began = _cpu()
            run()
            spent = _cpu() - began
            best[name] = min(best.get(name, spent), spent)
    print(json.dumps({name: round(seconds, 4) for name, seconds in best.items()}))


if __name__ == "__main__":
    main()
