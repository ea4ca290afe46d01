"""Tables, charts, cost reports and the command line. Reads runs and observations only."""
