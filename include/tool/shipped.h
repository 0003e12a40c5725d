/* shipped.h: the model and cluster files that ship with planner, by name
 * (--model gpt3-175b --cluster h100x512), looked up next to the binary's
 * install prefix (PREFIX/share/planner/{configs,clusters}, what `make
 * install` writes) and in the source tree the binary was built in. */
#ifndef PLANNER_SHIPPED_H
#define PLANNER_SHIPPED_H

#include <stddef.h>
#include <stdio.h>
#include "base/error.h"

/* `arg` when it names a file (or has a '/', or cannot be looked up: the
 * open then fails with the file's own message); else KIND/ARG.EXT from the
 * first shipped folder that has it, written to buf; else NULL with *err set
 * (PLANNER_E_IO, "'ARG': no such file, and no shipped model of that name"
 * and the closest shipped name).  kind: "configs" or "clusters". */
const char *shipped_resolve(const char *arg, const char *kind, const char *ext, char *buf,
                            size_t size, planner_error *err);

/* A run's --model and --cluster through shipped_resolve() in place (configs/
 * NAME.json, clusters/NAME.yaml), a shipped name's file written to its
 * buffer (both of `size` bytes): plan's and size's.  PLANNER_OK, or the
 * first failure with *err set. */
planner_status shipped_resolve_run(const char **model_path, char *model_buf,
                                   const char **cluster_path, char *cluster_buf, size_t size,
                                   planner_error *err);

/* The model library validate, calibrate and crossval read
 * (fit/validate.h validation_load_library) for --models ARG: ARG a folder;
 * "none": NULL (no library); NULL (not given): the first shipped configs
 * folder, written to buf, or NULL when there is none. */
const char *shipped_model_library(const char *arg, char *buf, size_t size);

/* Prints "HEADING (in FOLDER):" and the shipped names of `kind` below it
 * (sorted, comma-separated, wrapped to 80 columns), or "HEADING: (none
 * found)".  PLANNER_OK, or PLANNER_E_INTERNAL ("out of memory") with *err
 * set and nothing of the list printed. */
planner_status shipped_list(FILE *out, const char *heading, const char *kind, const char *ext,
                            planner_error *err);

/* shipped_list's listing of the files in folder `dir` ending in `ext`. */
planner_status shipped_list_in(FILE *out, const char *heading, const char *dir,
                               const char *ext, planner_error *err);

#endif
