-- gpubtree.device and gpubtree_device_info().
-- The parameters exist once the library is loaded: by shared_preload_libraries,
-- by LOAD, or by the first use of a gpubtree index in the session.
LOAD 'gpubtree';
SELECT name, boot_val, vartype, enumvals, context FROM pg_settings WHERE name = 'gpubtree.device';
SET gpubtree.device = gpu;
SHOW gpubtree.device;
SET gpubtree.device = cpu;
SET gpubtree.device = off;
SET gpubtree.device = 'AUTO';
SHOW gpubtree.device;
SET gpubtree.device = tpu;
SET gpubtree.nonexistent = 1;
RESET gpubtree.device;

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
