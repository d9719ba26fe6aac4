"""Graphs the LangGraph adapter's tests drive: nodes that ask, and a record of what ran."""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Annotated, Any, TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

from adapters.langgraph import HumanApproved, request_approval
from bot.client import Bridge


class Empty(TypedDict, total=False):
    """A graph's state for nodes that keep nothing in it."""

    note: str


class State(TypedDict, total=False):
    outcomes: Annotated[list[str], operator.add]


@dataclass
class Record:
    """What the graph did: each node run, and each side effect done."""

    runs: list[str] = field(default_factory=list)
    done: list[str] = field(default_factory=list)


def approval_graph(
    bridge: Bridge,
    record: Record,
    *,
    route: str,
    answerers: list[str],
    actions: tuple[str, ...] = ("deploy",),
    checkpointer: Any = None,
    callback_url: str | None = None,
) -> Any:
    """One node per action, all in one step from START; each asks before its side effect."""

    def node_for(action: str) -> Any:
        async def node(state: State) -> State:
            record.runs.append(action)
            decision = await request_approval(
                bridge,
                action,
                f"Run {action} on web 1.5",
                arguments={"service": "web", "version": "1.5"},
                route=route,
                answerers=answerers,
                risk="high",
                callback_url=callback_url,
            )
            if isinstance(decision, HumanApproved):
                record.done.append(action)  # the side effect, only once approved
            comment = getattr(decision, "comment", "")
            return {"outcomes": [f"{action}:{type(decision).__name__}:{comment}"]}

        return node

    builder = StateGraph(State)
    for action in actions:
        builder.add_node(action, node_for(action))
        builder.add_edge(START, action)
        builder.add_edge(action, END)
    return builder.compile(checkpointer=checkpointer or InMemorySaver())
