"""The reflex arc's detectors: pure functions from (session state, one event) to firings.

Each detector is a module with NAME and ``detect(state, obs, policy) -> list[Firing]``; it
keeps its own per-signature bookkeeping under ``state.detectors[NAME]`` and reads the shared
session track (``state.track``, see track.py) as it was *before* the event.  REGISTRY is the
order the fold runs them in, and the order matters once: starvation classifies the re-issue
(``obs.rerun``) that affordance then judges; landings mark hints followed before affordance
looks at them.
"""

from reflex.arc.detectors import affordance, friction, landings, starvation
from reflex.arc.detectors.firing import Firing, Obs

REGISTRY = {
    "starvation": starvation.detect,
    "landings": landings.detect,
    "affordance": affordance.detect,
    "friction": friction.detect,
}

__all__ = ["REGISTRY", "Firing", "Obs"]
