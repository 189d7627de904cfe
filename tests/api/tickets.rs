//! Integration tests of this area (see support for the harness).
