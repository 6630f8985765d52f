"""Invoices from a shop's exports into accounting: the package the larger pip shape installs (bench/environmentBuild.ts)."""
