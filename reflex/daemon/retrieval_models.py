"""The know/miss contract for `ctx get --json` and `ctx search --json`.

Every answer carries exactly one of two blocks:

  know  the bytes were found and verified against their BLAKE3; the agent may
        rely on them.
  miss  no trustworthy answer; `reason` says why, from a fixed vocabulary:
          stale       (refresh)  the worktree changed since the run
          superseded  (refresh)  a newer run of the same signature exists
          abstain     (escalate) nothing matched
          denatured   (escalate) the blob is missing its bytes or fails verification
          evicted     (escalate) retention removed the blob
        refresh-class misses carry `refresh` (the command that brings the
        answer back); escalate-class misses carry `escalate_to` (the next
        tools to try, best first).  Never both, never neither: the validator
        below raises on any other construction.
"""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, model_validator

REFRESH = ("stale", "superseded")
ESCALATE = ("abstain", "denatured", "evicted")
MissReason = Literal["stale", "superseded", "abstain", "denatured", "evicted"]


class Know(BaseModel):
    model_config = ConfigDict(extra="forbid")
    handle: str
    address: str
    span: tuple[int, int] | None = None
    b3: str                       # BLAKE3 (hex) of exactly the bytes in `text`'s source span
    bytes: int
    text: str
    truncated: bool = False
    next: str | None = None       # the address of the rest of a truncated answer (an L- or B-range)
    redacted: int = 0             # how many secret values were masked
    neutralized: int = 0          # lines escaped because they read as ctx's or the harness's control text
    lossy: bool = False           # `text` is not the exact bytes: not UTF-8 (binary), shown with U+FFFD
    matches: int | None = None    # search only: matching lines (a lower bound when not complete)
    complete: bool | None = None  # search only: False when the time limit stopped it before it read everything


class Miss(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reason: MissReason
    detail: str
    refresh: str | None = None
    escalate_to: list[str] = []
    handle: str | None = None

    @model_validator(mode="after")
    def _one_remedy(self) -> "Miss":
        if self.reason in REFRESH:
            if not self.refresh or self.escalate_to:
                raise ValueError("refresh-class miss %r needs `refresh` and no `escalate_to`" % self.reason)
        else:
            if self.refresh or not self.escalate_to:
                raise ValueError("escalate-class miss %r needs `escalate_to` and no `refresh`" % self.reason)
        return self


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str
    know: Know | None = None
    miss: Miss | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> "Answer":
        if (self.know is None) == (self.miss is None):
            raise ValueError("an answer carries exactly one of know / miss")
        return self

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)
