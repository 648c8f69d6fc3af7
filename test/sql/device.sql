-- gpubtree.device (whether a session uses the GPU service), gpubtree.engine
-- (where the service keeps its mirrors) and gpubtree_device_info().
-- The parameters exist once the library is loaded: by shared_preload_libraries,
-- by LOAD, or by the first use of a gpubtree index in the session
-- (gpubtree.engine only by shared_preload_libraries).
LOAD 'gpubtree';
SELECT name, boot_val, vartype, enumvals, context FROM pg_settings
WHERE name IN ('gpubtree.device', 'gpubtree.engine') ORDER BY name;
SET gpubtree.device = off;
SHOW gpubtree.device;
SET gpubtree.device = 'AUTO';
SHOW gpubtree.device;
-- The values that once chose the engine are refused, with a hint.
SET gpubtree.device = gpu;
SET gpubtree.device = cpu;
SELECT set_config('gpubtree.device', 'gpu', true);
SHOW gpubtree.device;
SET gpubtree.device = tpu;
SET gpubtree.nonexistent = 1;
RESET gpubtree.device;

-- gpubtree.engine is the service's, read at server start.
SET gpubtree.engine = cpu;
SELECT set_config('gpubtree.engine', 'gpu', false);
BEGIN;
SET LOCAL gpubtree.engine = auto;
ROLLBACK;
-- gpubtree_status() shows the setting, and the engine the service uses:
-- the GPU where gpu is true (the machine decides), else the CPU engine.
SELECT running, engine_setting = current_setting('gpubtree.engine') AS shows_setting,
	   engine = CASE WHEN gpu THEN 'gpu' ELSE 'cpu' END AS shows_engine
FROM gpubtree_status();

-- The answer depends on the build and the machine, so check its shape:
-- at least one row, a reason always given, CUDA details only with a CUDA
-- build, device details only with a device.
SELECT count(*) >= 1 AS has_rows,
	   bool_and(status IS NOT NULL) AS has_status,
	   bool_and(built_with_cuda = (cuda_version IS NOT NULL)) AS version_iff_cuda,
	   bool_and(device_name IS NULL OR (built_with_cuda AND device_memory > 0
										AND device_sms > 0
										AND compute_capability ~ '^[0-9]+\.[0-9]+$')) AS device_sane,
	   bool_and(device_name IS NOT NULL OR status <> 'available') AS no_device_explained
FROM gpubtree_device_info();
SELECT count(DISTINCT built_with_cuda) = 1 AS one_build FROM gpubtree_device_info();
