"""What the event contract bounds, in one place, and how a recorder keeps within it.

The values are the contract's JSON Schema's (`$defs.id.maxLength`, `$defs.index.maximum`, `usage.maxItems`) and the
service's nesting limit; a unit test holds them to the schema the package ships.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from toolhistory.events import TokenUsage

MAX_ID_LENGTH = 256
"""The longest id (tenant, conversation, channel, run, tool name, model, `decidedBy`)."""
MAX_INDEX = 2_147_483_647
"""The largest round or sequence index, and the largest token count."""
MAX_USAGE_ENTRIES = 1_000
"""The most usage entries (model calls) one run's end may carry."""
MAX_JSON_DEPTH = 64
"""How deep `arguments` and `result` may nest (checked by the service; JSON Schema cannot say it)."""


def token_count(value: object) -> int:
    """A framework's token count as the contract takes it: a whole number from 0 to MAX_INDEX (else 0)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        return 0
    return min(int(value), MAX_INDEX)


def bounded_usage(usage: Sequence[TokenUsage]) -> list[TokenUsage]:
    """At most MAX_USAGE_ENTRIES entries: the model calls beyond fold into the last one.

    The totals stay right (up to MAX_INDEX); the folded entry names a model only when all its calls used the same one.
    """
    if len(usage) <= MAX_USAGE_ENTRIES:
        return list(usage)
    tail = usage[MAX_USAGE_ENTRIES - 1 :]
    models = {entry.model for entry in tail}
    folded = TokenUsage(
        input_tokens=token_count(sum(entry.input_tokens for entry in tail)),
        output_tokens=token_count(sum(entry.output_tokens for entry in tail)),
        model=next(iter(models)) if len(models) == 1 else None,
    )
    return [*usage[: MAX_USAGE_ENTRIES - 1], folded]


def json_depth(value: object) -> int:
    """How many levels of objects and arrays `value` nests (a scalar: 0)."""
    depth, level = 0, [value]
    while level:
        containers = [entry for entry in level if isinstance(entry, (dict, list))]
        if not containers:
            break
        depth += 1
        level = [child for entry in containers for child in (entry.values() if isinstance(entry, dict) else entry)]
    return depth
