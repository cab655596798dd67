"""The differential corpus: requests replayed against Heat 27 (recorded) and Kiln (tested)."""
