"""Planning: GOAP (with Boeda's cooperation), HTN, the planning scheduler, plan explanations.

Pure library code: no sockets, no asyncio, no clocks. Everything here is deterministic.
"""

# --- GOAP block: public names of the GOAP / cooperation / scheduler / GOAP-explanation modules ---
# --- end GOAP block ---

# --- HTN block: public names of the fact database / HTN / parser / HTN-explanation modules ---
# --- end HTN block ---

__all__: list[str] = []
# GOAP __all__ entries are added below this line
# HTN __all__ entries are added below this line
