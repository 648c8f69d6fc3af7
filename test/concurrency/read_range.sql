\set lo random(0, 195000)
SELECT check_range(:lo, :lo + 5000);
