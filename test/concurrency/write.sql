\set k random(0, 199999)
\set v random(1, 1000000)
BEGIN;
INSERT INTO g VALUES (:k, :v);
INSERT INTO b VALUES (:k, :v);
COMMIT;
