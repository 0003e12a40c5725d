/* calibration.h: the calibration file: fitted cost_params, written by
 * `planner calibrate -o` and read back with --calibration (calibration.c). */
#ifndef PLANNER_CALIBRATION_H
#define PLANNER_CALIBRATION_H

#include <stdio.h>
#include "fit/calibrate.h"

#define CALIBRATION_VERSION 1

/* Loads a calibration file over *p (which should hold the defaults): only
 * the constants the file names change; *p is untouched on failure. */
planner_status calibration_load(cost_params *p, const char *path, planner_error *err);

/* The cost parameters a command plans with (its --calibration FILE): the
 * defaults (cost_params_default), then the constants of the file at path
 * (calibration_load) unless path is NULL. */
planner_status calibration_params(cost_params *p, const char *path, planner_error *err);

/* Writes the calibration file (atomically; "-" is std_out, the caller's
 * standard output): version, runs_file, params by name, fit statistics and
 * per-run residuals.  Nothing is written when it fails. */
planner_status calibration_write(const char *path, FILE *std_out, const calib_fit *f,
                                 const validation_set *set, const char *runs_file,
                                 planner_error *err);

#endif
