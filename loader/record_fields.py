"""Names a record's fields share across the stages: the source, the plan, apply and reports.

`custom_attributes` is the one field holding a map (label -> value) rather than one value; a
mapping names one of its labels as `custom_attributes.<Label>`.
"""

from __future__ import annotations

from typing import Final

CUSTOM: Final = "custom_attributes"
