/* model_library.h: a folder of model definitions (HF config.json or planner
 * JSON files, one per model, named after it: configs/qwen3-30b-a3b.json),
 * looked up by a model's published name.  validate, calibrate and crossval
 * use it to take from a run's named model what the runs schema cannot say
 * (fit/validate.c); the tool passes the folder (the shipped configs). */
#ifndef PLANNER_MODEL_LIBRARY_H
#define PLANNER_MODEL_LIBRARY_H

#include <stddef.h>

/* The key two names are compared by: lowercase letters and digits only, and
 * nothing from the first " (" on ("DeepSeek-V3 (671B total / 37B active)"
 * and "deepseek-v3" are both "deepseekv3"; "Qwen3-30B-A3B" and
 * "qwen3-30b-a3b" "qwen330ba3b").  Writes at most size bytes with the NUL. */
void model_library_key(const char *name, char *key, size_t size);

/* The file of `dir` whose name less ".json" has the key of `name`, into
 * path: 1; none (or no folder, or dir NULL): 0; two or more: -1 (which is
 * ambiguous, and neither is used). */
int model_library_find(const char *dir, const char *name, char *path, size_t size);

#endif
