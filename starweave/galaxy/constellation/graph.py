"""DagIndex: adjacency of a task DAG with an incrementally maintained topological order.

Cycle checks happen before an edge is inserted. The index keeps a topological rank per node
(Pearce-Kelly dynamic topological sort): an edge that agrees with the ranks is accepted in O(1);
otherwise only the nodes whose ranks lie between the two endpoints are searched (O(V+E) worst
case) and re-ranked. Edges out of a node without predecessors or into a node without successors
are O(1) too. Every traversal is iterative, so million-node chains are fine.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator

from .errors import CycleError


class DagIndex:
    """Successor/predecessor maps keyed by node id, edges identified by line id."""

    def __init__(self) -> None:
        self._out: dict[str, dict[str, str]] = {}  # node -> {line_id: successor}
        self._in: dict[str, dict[str, str]] = {}  # node -> {line_id: predecessor}
        self._rank: dict[str, int] = {}
        self._low = 0
        self._high = 0

    def __contains__(self, node: str) -> bool:
        return node in self._rank

    def __len__(self) -> int:
        return len(self._rank)

    # ----------------------------------------------------------------- nodes
    def add_node(self, node: str) -> None:
        """Add an isolated node (ranked last)."""
        self._out[node] = {}
        self._in[node] = {}
        self._high += 1
        self._rank[node] = self._high

    def remove_node(self, node: str) -> None:
        """Remove a node; its edges must have been removed first."""
        del self._out[node], self._in[node], self._rank[node]

    def out_lines(self, node: str) -> dict[str, str]:
        """Outgoing ``{line_id: successor}`` (live view; do not mutate)."""
        return self._out[node]

    def in_lines(self, node: str) -> dict[str, str]:
        """Incoming ``{line_id: predecessor}`` (live view; do not mutate)."""
        return self._in[node]

    # ----------------------------------------------------------------- edges
    def add_edge(self, line_id: str, source: str, target: str) -> None:
        """Insert ``source -> target`` or raise CycleError without changing anything."""
        rank = self._rank
        if rank[source] >= rank[target]:
            if not self._in[source]:
                self._low -= 1
                rank[source] = self._low
            elif not self._out[target]:
                self._high += 1
                rank[target] = self._high
            else:
                self._reorder(source, target)
        self._out[source][line_id] = target
        self._in[target][line_id] = source

    def remove_edge(self, line_id: str, source: str, target: str) -> None:
        """Remove an edge (ranks stay valid)."""
        del self._out[source][line_id]
        del self._in[target][line_id]

    def would_create_cycle(self, source: str, target: str) -> bool:
        """True when ``target`` already reaches ``source`` (or they are equal)."""
        if source == target:
            return True
        if self._rank[source] < self._rank[target] or not self._in[source] or not self._out[target]:
            return False
        return self._search(target, lambda n: self._out[n].values(), self._rank[source], True, source) is None

    def _search(
        self, start: str, step: Callable[[str], object], bound: int, forward: bool, stop: str | None
    ) -> list[str] | None:
        """Nodes reachable from ``start`` within the rank bound; None when ``stop`` is reached."""
        rank = self._rank
        seen = {start}
        stack = [start]
        while stack:
            node = stack.pop()
            for nxt in step(node):  # type: ignore[attr-defined]
                if nxt == stop:
                    return None
                if nxt in seen:
                    continue
                if (rank[nxt] <= bound) if forward else (rank[nxt] >= bound):
                    seen.add(nxt)
                    stack.append(nxt)
        return list(seen)

    def _reorder(self, source: str, target: str) -> None:
        rank = self._rank
        upper, lower = rank[source], rank[target]
        forward = self._search(target, lambda n: self._out[n].values(), upper, True, source)
        if forward is None:
            raise CycleError(f"Adding dependency {source} -> {target} would create a cycle")
        backward = self._search(source, lambda n: self._in[n].values(), lower, False, None)
        assert backward is not None  # no stop node given
        backward.sort(key=rank.__getitem__)
        forward.sort(key=rank.__getitem__)
        slots = sorted(rank[n] for n in backward + forward)
        for node, slot in zip(backward + forward, slots, strict=True):
            rank[node] = slot

    # ----------------------------------------------------------------- whole-graph algorithms
    def nodes(self) -> Iterator[str]:
        """All node ids in insertion order."""
        return iter(self._rank)

    def topological_order(self) -> list[str]:
        """Kahn's algorithm (ties in insertion order); raises CycleError on a cycle."""
        indegree = {node: len(preds) for node, preds in self._in.items()}
        queue = deque(node for node, deg in indegree.items() if deg == 0)
        order: list[str] = []
        while queue:
            node = queue.popleft()
            order.append(node)
            for nxt in self._out[node].values():
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
        for node in self.topological_order():
            via: str | None = None
            for pred in self._in[node].values():
                if via is None or best[pred] > best[via]:
                    via = pred
            best[node] = (best[via] if via is not None else 0.0) + weight(node)
            parent[node] = via
            if end is None or best[node] > best[end]:
                end = node
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
        for node in self.topological_order():
            depth[node] = max((depth[p] + 1 for p in self._in[node].values()), default=0)
        return depth
