\set seed random(0, 1000000)
SELECT check_any(:seed, 2000);
