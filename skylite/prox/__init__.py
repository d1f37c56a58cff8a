"""Prox operators of losses and regularizers (DESIGN.md section 1)."""
