"""Reports over many programs: operation-count tables and the scaling study."""
