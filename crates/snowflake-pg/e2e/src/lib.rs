//! Nothing: the tests are in tests/, run by scripts/pg-extension test.
