"""Pydantic models for Claude Code hook payloads (the trust boundary).

Inputs allow extra fields: the protocol grows monthly and an unknown field
must never turn a valid call into a malformed one.  Only the fields ctx
reads are typed; tool_input/tool_response stay dicts (Bash's shapes are read
through small accessors).
"""

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class ClaudeHookInput(BaseModel):
    model_config = ConfigDict(extra="allow")

    session_id: str = Field(min_length=1, max_length=512)
    hook_event_name: str = Field(min_length=1, max_length=128)
    cwd: str | None = None
    transcript_path: str | None = None
    permission_mode: str | None = None
    prompt_id: str | None = None
    agent_id: str | None = None
    tool_name: str | None = None
    tool_input: dict[str, Any] | None = None
    tool_use_id: str | None = None
    tool_response: Any = None
    error: str | None = None
    is_interrupt: bool | None = None
    duration_ms: float | None = None
    model: str | None = None
    source: str | None = None
    reason: str | None = None

    @property
    def command(self):
        if self.tool_input and isinstance(self.tool_input.get("command"), str):
            return self.tool_input["command"]
        return None
