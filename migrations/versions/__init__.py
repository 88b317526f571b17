"""The revisions, in order; each frozen as it was written (a later one never edits an earlier
one), so they never import the store's current tables."""
