/* calibration.h: fitted cost_params, written by `planner calibrate` and read
 * back with --calibration. */
#ifndef PLANNER_CALIBRATION_H
#define PLANNER_CALIBRATION_H

#include "schedule/evaluate.h"

/* Loads a calibration file over *p (which should hold the defaults). */
planner_status calibration_load(const char *path, cost_params *p, planner_error *err);

#endif
