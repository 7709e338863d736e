"""Pieces every domain shares: option value parsers, the result row type, the error type and the
study runner that turns a study into result files, plots and a table or JSON."""
