"""The BlockADMM engine (DESIGN.md section 3). Not built yet: see the engine issue."""
