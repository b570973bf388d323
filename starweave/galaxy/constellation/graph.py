"""DagIndex: adjacency of a task DAG with an incrementally maintained topological order.

Cycle checks happen before an edge is inserted. The index keeps a topological rank per node
(Pearce-Kelly dynamic topological sort): an edge that agrees with the ranks is accepted in O(1);
otherwise only the nodes whose ranks lie between the two endpoints are searched (O(V+E) worst
case) and re-ranked. Edges out of a node without predecessors or into a node without successors
are O(1) too. Every traversal is iterative, so million-node chains are fine.

The graph is intrusive: each node object carries its own rank and adjacency maps (``GraphNode``),
and the index's ``nodes`` dictionary is the only map from id to node, so the constellation uses
it as its task table. An insertion then touches the two endpoint objects and nothing else, which
is what keeps a 200,000-edge build within its time budget.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from typing import Generic, Protocol, TypeVar

from starweave.errors import CycleError, InvalidArgumentError


class GraphNode(Protocol):
    """What a node object holds for the index: its rank and ``{line_id: neighbour id}`` both ways."""

    _rank: int
    _out: dict[str, str]
    _in: dict[str, str]


N = TypeVar("N", bound=GraphNode)


class DagIndex(Generic[N]):
    """Successor/predecessor maps keyed by node id, edges identified by line id."""

    def __init__(self) -> None:
        self.nodes: dict[str, N] = {}
        self._low = 0
        self._high = 0

    def __contains__(self, key: str) -> bool:
        return key in self.nodes

    def __len__(self) -> int:
        return len(self.nodes)

    # ----------------------------------------------------------------- nodes
    def add_node(self, key: str, node: N) -> None:
        """Add an isolated node (ranked last); ``key`` must be new, ``node`` without edges."""
        if node._out or node._in:
            raise InvalidArgumentError(f"Node {key} still has edges from another graph")
        self._high += 1
        node._rank = self._high
        self.nodes[key] = node

    def remove_node(self, key: str) -> N:
        """Remove a node and return it; its edges must have been removed first."""
        return self.nodes.pop(key)

    def out_lines(self, key: str) -> dict[str, str]:
        """Outgoing ``{line_id: successor}`` (live view; do not mutate)."""
        return self.nodes[key]._out

    def in_lines(self, key: str) -> dict[str, str]:
        """Incoming ``{line_id: predecessor}`` (live view; do not mutate)."""
        return self.nodes[key]._in

    # ----------------------------------------------------------------- edges
    def add_edge(self, line_id: str, source: str, target: str) -> None:
        """Insert ``source -> target`` or raise CycleError without changing anything."""
        self.link(line_id, source, self.nodes[source], target, self.nodes[target])

    def link(self, line_id: str, source_key: str, source: N, target_key: str, target: N) -> None:
        """``add_edge`` with both nodes already looked up (the hot path of bulk builds)."""
        if source._rank >= target._rank:
            if not source._in:
                self._low -= 1
                source._rank = self._low
            elif not target._out:
                self._high += 1
                target._rank = self._high
            else:
                self._reorder(source_key, source, target_key, target)
        source._out[line_id] = target_key
        target._in[line_id] = source_key

    def remove_edge(self, line_id: str, source: str, target: str) -> None:
        """Remove an edge (ranks stay valid)."""
        del self.nodes[source]._out[line_id]
        del self.nodes[target]._in[line_id]

    def would_create_cycle(self, source: str, target: str) -> bool:
        """True when ``target`` already reaches ``source`` (or they are equal)."""
        if source == target:
            return True
        src, dst = self.nodes[source], self.nodes[target]
        if src._rank < dst._rank or not src._in or not dst._out:
            return False
        return self._search(dst, True, src._rank, src) is None

    def _search(self, start: N, forward: bool, bound: int, stop: N | None) -> list[N] | None:
        """Nodes reachable from ``start`` within the rank bound; None when ``stop`` is reached."""
        nodes = self.nodes
        seen = {id(start)}
        found = [start]
        stack = [start]
        while stack:
            node = stack.pop()
            for key in (node._out if forward else node._in).values():
                nxt = nodes[key]
                if nxt is stop:
                    return None
                if id(nxt) in seen:
                    continue
                if (nxt._rank <= bound) if forward else (nxt._rank >= bound):
                    seen.add(id(nxt))
                    found.append(nxt)
                    stack.append(nxt)
        return found

    def _reorder(self, source_key: str, source: N, target_key: str, target: N) -> None:
        forward = self._search(target, True, source._rank, source)
        if forward is None:
            raise CycleError(f"Adding dependency {source_key} -> {target_key} would create a cycle")
        backward = self._search(source, False, target._rank, None)
        assert backward is not None  # no stop node given
        backward.sort(key=_rank_of)
        forward.sort(key=_rank_of)
        moved = backward + forward
        for node, slot in zip(moved, sorted(n._rank for n in moved), strict=True):
            node._rank = slot

    # ----------------------------------------------------------------- whole-graph algorithms
    def keys(self) -> Iterator[str]:
        """All node ids in insertion order."""
        return iter(self.nodes)

    def topological_order(self) -> list[str]:
        """Kahn's algorithm (ties in insertion order); raises CycleError on a cycle."""
        nodes = self.nodes
        indegree = {key: len(node._in) for key, node in nodes.items()}
        queue = deque(key for key, deg in indegree.items() if deg == 0)
        order: list[str] = []
        while queue:
            key = queue.popleft()
            order.append(key)
            for nxt in nodes[key]._out.values():
                indegree[nxt] -= 1
                if indegree[nxt] == 0:
                    queue.append(nxt)
        if len(order) != len(indegree):
            raise CycleError("DAG contains cycles")
        return order

    def has_cycle(self) -> bool:
        """True when Kahn's algorithm cannot order every node."""
        try:
            self.topological_order()
        except CycleError:
            return True
        return False

    def heaviest_path(self, weight: Callable[[str], float]) -> tuple[float, list[str]]:
        """Maximum total ``weight`` over any path, and that path (empty graph: ``(0, [])``)."""
        best: dict[str, float] = {}
        parent: dict[str, str | None] = {}
        end: str | None = None
        for key in self.topological_order():
            via: str | None = None
            for pred in self.nodes[key]._in.values():
                if via is None or best[pred] > best[via]:
                    via = pred
            best[key] = (best[via] if via is not None else 0.0) + weight(key)
            parent[key] = via
            if end is None or best[key] > best[end]:
                end = key
        if end is None:
            return 0.0, []
        path: list[str] = []
        cursor: str | None = end
        while cursor is not None:
            path.append(cursor)
            cursor = parent[cursor]
        path.reverse()
        return best[end], path

    def levels(self) -> dict[str, int]:
        """Depth of each node: 0 for roots, else 1 + the deepest predecessor."""
        depth: dict[str, int] = {}
        for key in self.topological_order():
            depth[key] = max((depth[p] + 1 for p in self.nodes[key]._in.values()), default=0)
        return depth


def _rank_of(node: GraphNode) -> int:
    return node._rank
