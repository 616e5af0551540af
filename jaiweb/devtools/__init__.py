"""Tools for developing and testing jaiweb on one machine (the local cluster), never used by
the product's own code (an import-linter contract keeps it so)."""
