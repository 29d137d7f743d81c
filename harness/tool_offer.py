"""What tools one agent loop offers, step by step: ``ToolOffer``.

The run's tools are the task's, the strategy's and the loop's final tool (``submit``; a
sub-agent's ``report``). At each step the strategy may reorder them (``order_tools``) and
choose some of them (``expose_tools``); both choices are checked. A call to a tool of the run
that this step did not offer is refused by the loop (``is_unoffered``).
"""

from __future__ import annotations

from harness.contracts import FullStrategy, tool_name
from harness.conversation import check_tool_order, check_tool_subset


class ToolOffer:
    """The run's tools and this step's choice of them (``tools``)."""

    def __init__(self, final_tool: dict) -> None:
        self.final_tool = final_tool
        self.final_name = tool_name(final_tool)
        self.all_tools: list[dict] = []
        self.tools: list[dict] = []  # this step's tools (``all_tools`` itself when the strategy chose nothing)
        self.strategy_tool_names: set[str] = set()
        self.reordered = False  # order_tools chose this step's order
        self.exposed = False  # expose_tools chose this step's tools

    def open(self, task_tools: list[dict], strategy_tools: list[dict]) -> None:
        """Offer the task's tools, the strategy's and the final tool, in that order."""
        self.strategy_tool_names = {tool_name(t) for t in strategy_tools}
        self.all_tools = self.tools = list(task_tools) + strategy_tools + [self.final_tool]

    def choose(self, strategy: FullStrategy) -> None:
        """This step's tool schemas: the strategy's order (``order_tools``) and choice (``expose_tools``), checked
        (``InvalidConversation`` when they are not the run's tools).

        The schemas precede the messages in the cached prefix, so both hooks are for measured
        experiments. An unchanged choice keeps the previous list object (the memoized counts stay valid).
        """
        tools = self.all_tools
        ordered = strategy.order_tools(list(tools))
        self.reordered = ordered is not None
        if ordered is not None:
            tools = list(ordered)
            check_tool_order(tools, self.all_tools)
        exposed = strategy.expose_tools(list(tools))
        self.exposed = exposed is not None
        if exposed is not None:
            exposed = list(exposed)
            check_tool_subset(exposed, tools, self.final_name)
            tools = self.tools if exposed == self.tools else exposed
        self.tools = tools

    def names(self) -> list[str]:
        """The names of this step's tools, in order."""
        return [tool_name(t) for t in self.tools]

    def fields(self) -> dict:
        """The request event's record of this step's tools: ``tool_order`` and ``tools_offered`` when chosen."""
        names = self.names()
        fields = {"tool_order": names} if self.reordered else {}
        if self.exposed:
            fields["tools_offered"] = names
        return fields

    def is_task_call(self, name: str) -> bool:
        """Whether ``name`` is one of the task's own tools (not the final tool, not a strategy tool)."""
        return name != self.final_name and name not in self.strategy_tool_names

    def is_unoffered(self, name: str) -> bool:
        """Whether ``name`` is one of the run's tools that ``expose_tools`` did not offer at this step.

        Such a call is answered with an error and not executed: a model can only call what the
        request offers (a wrong choice of tools costs a step, as it would with a real model).
        """
        if self.tools is self.all_tools:
            return False
        known = {tool_name(t) for t in self.all_tools}
        return name in known and name not in set(self.names())
