"""Monthly ledger reports from bank exports: the package the Poetry shape installs (bench/environmentBuild.ts)."""

__version__ = "0.3.0"
