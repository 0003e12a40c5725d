/* calibration.c: the calibration file, written by `planner calibrate -o`
 * and read back with --calibration (calibration.h).
 *
 * Format (version CALIBRATION_VERSION): {"version", "runs_file", "params":
 * {"GEN.NAME": value, ...}, "fit": {runs, parameters, iterations,
 * converged, rms/max relative error, condition number, singular values,
 * residuals per run}}.  Written with every number at full precision
 * (JSON_REAL_PRECISION(17): the values read back bit for bit), atomically.
 * Read through jsonin.c: unknown keys (did-you-mean), wrong types and
 * values outside the parameter's range are refused at their line:col; only
 * "params" changes the constants, "fit" is checked and otherwise ignored.
 * The parameter names and ranges are calibrate.c's table.
 */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "base/fileio.h"
#include "base/jsonin.h"
#include "base/jsonout.h"
#include "base/suggest.h"
#include "fit/calibrate.h"
#include "fit/calibration.h"

/* The file as a jansson tree: every number at full precision, so that
 * JSON_REAL_PRECISION(17) writes text that reads back bit for bit; non-finite
 * numbers become null.  Returns NULL when an allocation fails. */
static json_t *calibration_json(const calib_fit *f, const validation_set *set,
                                const char *runs_file)
{
    json_t *root = json_object(), *params = json_object(), *fit = json_object();
    json_t *sv = json_array(), *residuals = json_array();
    bool bad = false;
    int j, i;

    bad |= json_object_set_new(root, "version", json_integer(CALIBRATION_VERSION)) != 0;
    bad |= json_object_set_new(root, "runs_file",
                               json_string(runs_file != NULL ? runs_file : "")) != 0;
    for (j = 0; j < f->n_params; j++) {
        char name[CALIB_NAME_MAX];
        calib_param_name(&f->param[j], name, sizeof name);
        bad |= json_object_set_new(params, name, jsonout_real(f->value[j])) != 0;
        bad |= json_array_append_new(sv, jsonout_real(f->sv[j])) != 0;
    }
    bad |= json_object_set_new(fit, "runs", json_integer(f->n_runs)) != 0;
    bad |= json_object_set_new(fit, "parameters", json_integer(f->n_params)) != 0;
    bad |= json_object_set_new(fit, "iterations", json_integer(f->iterations)) != 0;
    bad |= json_object_set_new(fit, "converged", json_boolean(f->converged)) != 0;
    bad |= json_object_set_new(fit, "rms_relative_error", jsonout_real(f->rms_rel)) != 0;
    bad |= json_object_set_new(fit, "max_relative_error", jsonout_real(f->max_rel)) != 0;
    bad |= json_object_set_new(fit, "condition_number", jsonout_real(f->condition)) != 0;
    bad |= json_object_set_new(fit, "singular_values", sv) != 0;
    for (i = 0; i < f->n_runs; i++) {
        const calib_run_fit *r = &f->run[i];
        json_t *jr = json_object();
        bad |= json_object_set_new(jr, "id", json_string(set != NULL && r->run < set->n
                                                         ? set->run[r->run].id : "")) != 0;
        bad |= json_object_set_new(jr, "measured_step_s", jsonout_real(r->measured_step_s)) != 0;
        bad |= json_object_set_new(jr, "predicted_step_s",
                                   jsonout_real(r->predicted_step_s)) != 0;
        bad |= json_object_set_new(jr, "relative_error", jsonout_real(r->rel_error)) != 0;
        bad |= json_array_append_new(residuals, jr) != 0;
    }
    bad |= json_object_set_new(fit, "residuals", residuals) != 0;
    /* the set_new calls take params and fit over even when they fail */
    bad |= json_object_set_new(root, "params", params) != 0;
    bad |= json_object_set_new(root, "fit", fit) != 0;
    if (bad) {
        json_decref(root);
        return NULL;
    }
    return root;
}

planner_status calibration_write(const char *path, FILE *std_out, const calib_fit *f,
                                 const validation_set *set, const char *runs_file,
                                 planner_error *err)
{
    json_t *root = calibration_json(f, set, runs_file);
    char *text = jsonout_text(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
                                    JSON_REAL_PRECISION(17));
    atomic_file af;
    planner_status st;

    json_decref(root);
    if (text == NULL)
        return error_oom(err);
    if ((st = atomic_open(&af, path, std_out, err)) != PLANNER_OK)
        goto cleanup;
    (void)fputs(text, af.fp);   /* a write error shows in atomic_commit (ferror) */
    if ((st = atomic_commit(&af, err)) != PLANNER_OK)
        atomic_abort(&af);
cleanup:
    pl_free(text);
    return st;
}

/* An unknown key: a message with did-you-mean. */
static planner_status unknown_key(const jsonin_doc *doc, const jsonin_path *p,
                                  const char *const *known, size_t n)
{
    char hint[128];
    suggest_format(p->e[p->n - 1].key, known, n, hint, sizeof hint);
    return jsonin_fail(doc, p, "unknown key%s", hint);
}

static int key_known(const char *key, const char *const *known, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (strcmp(key, known[i]) == 0)
            return 1;
    return 0;
}

static planner_status check_fit(const jsonin_doc *doc, json_t *fit)
{
    static const char *const keys[] = {"runs", "parameters", "iterations", "converged",
                                       "rms_relative_error", "max_relative_error",
                                       "condition_number", "singular_values", "residuals"};
    static const char *const rkeys[] = {"id", "measured_step_s", "predicted_step_s",
                                        "relative_error"};
    const size_t nk = sizeof keys / sizeof keys[0], nr = sizeof rkeys / sizeof rkeys[0];
    const jsonin_path root = JSONIN_PATH_ROOT, fp = jsonin_key(&root, "fit");
    const char *key;
    json_t *v;

    if (!json_is_object(fit))
        return jsonin_fail(doc, &fp, "expected an object");
    json_object_foreach(fit, key, v) {
        jsonin_path kp = jsonin_key(&fp, key);
        if (!key_known(key, keys, nk))
            return unknown_key(doc, &kp, keys, nk);
        if (strcmp(key, "converged") == 0) {
            if (!json_is_boolean(v))
                return jsonin_fail(doc, &kp, "expected true or false");
        } else if (strcmp(key, "singular_values") == 0) {
            size_t i;
            json_t *e;
            if (!json_is_array(v))
                return jsonin_fail(doc, &kp, "expected an array of numbers");
            json_array_foreach(v, i, e) {
                if (!json_is_number(e) || json_number_value(e) < 0) {
                    jsonin_path ep = jsonin_index(&kp, i);
                    return jsonin_fail(doc, &ep, "expected a number >= 0");
                }
            }
        } else if (strcmp(key, "residuals") == 0) {
            size_t i;
            json_t *e;
            if (!json_is_array(v))
                return jsonin_fail(doc, &kp, "expected an array of objects");
            json_array_foreach(v, i, e) {
                jsonin_path ep = jsonin_index(&kp, i);
                const char *rk;
                json_t *rv;
                if (!json_is_object(e))
                    return jsonin_fail(doc, &ep, "expected an object");
                json_object_foreach(e, rk, rv) {
                    jsonin_path rp = jsonin_key(&ep, rk);
                    if (!key_known(rk, rkeys, nr))
                        return unknown_key(doc, &rp, rkeys, nr);
                    if (strcmp(rk, "id") == 0 ? !json_is_string(rv) : !json_is_number(rv))
                        return jsonin_fail(doc, &rp, strcmp(rk, "id") == 0
                                                         ? "expected a string"
                                                         : "expected a number");
                }
            }
        } else if (strcmp(key, "condition_number") == 0 ||
                   strcmp(key, "rms_relative_error") == 0 ||
                   strcmp(key, "max_relative_error") == 0) {
            if (!json_is_number(v) && !json_is_null(v))
                return jsonin_fail(doc, &kp, "expected a number");
        } else {
            if (!json_is_integer(v) || json_integer_value(v) < 0)
                return jsonin_fail(doc, &kp, "expected a whole number >= 0");
        }
    }
    return PLANNER_OK;
}

/* The top level: an object of known keys, the version, runs_file and fit. */
static planner_status check_top(const jsonin_doc *doc, json_t *root)
{
    static const char *const top[] = {"version", "runs_file", "params", "fit"};
    const size_t ntop = sizeof top / sizeof top[0];
    const jsonin_path rootp = JSONIN_PATH_ROOT;
    jsonin_path kp;
    const char *key;
    json_t *v;

    if (!json_is_object(root))
        return jsonin_fail(doc, &rootp,
                           "a calibration file is a JSON object (from 'planner calibrate')");
    json_object_foreach(root, key, v) {
        if (!key_known(key, top, ntop)) {
            kp = jsonin_key(&rootp, key);
            return unknown_key(doc, &kp, top, ntop);
        }
    }
    kp = jsonin_key(&rootp, "version");
    v = json_object_get(root, "version");
    if (v == NULL)
        return jsonin_fail(doc, &rootp, "missing \"version\" (expected %d)", CALIBRATION_VERSION);
    if (!json_is_integer(v) || json_integer_value(v) != CALIBRATION_VERSION)
        return jsonin_fail(doc, &kp, "unsupported version (expected %d)", CALIBRATION_VERSION);
    kp = jsonin_key(&rootp, "runs_file");
    v = json_object_get(root, "runs_file");
    if (v != NULL && !json_is_string(v))
        return jsonin_fail(doc, &kp, "expected a string");
    v = json_object_get(root, "fit");
    if (v != NULL)
        return check_fit(doc, v);
    return PLANNER_OK;
}

/* One "params" entry `key`: pv at path pp.  Pass 0 applies a bare
 * per-generation name to every generation, pass 1 a "GEN.NAME". */
static planner_status apply_param(cost_params *q, const jsonin_doc *doc, const jsonin_path *pp,
                                  const char *key, json_t *pv, int pass, planner_error *err)
{
    calib_param cp;
    planner_error why = PLANNER_ERROR_INIT;
    double x;
    int g, bare = calib_field_bare(key);
    if (bare >= 0) {
        cp.field = bare;
        cp.gen = 0;
    } else if (calib_param_parse(&cp, key) != 0) {
        calib_name_list *names = pl_malloc(sizeof *names);
        planner_status st;
        if (names == NULL)
            return error_oom(err);
        calib_param_names(names);
        st = unknown_key(doc, pp, names->ptr, names->n);
        pl_free(names);
        return st;
    }
    if (!json_is_number(pv))
        return jsonin_fail(doc, pp, "expected a number");
    x = json_number_value(pv);
    if (calib_param_check(&cp, x, &why) != PLANNER_OK)
        return jsonin_fail(doc, pp, "%s", why.msg);
    if (bare >= 0 && pass == 0) {
        for (g = 0; g < GEN_COUNT; g++) {
            cp.gen = g;
            calib_param_set(q, &cp, x);
        }
    } else if (bare < 0 && pass == 1) {
        calib_param_set(q, &cp, x);
    }
    return PLANNER_OK;
}

/* "params": an object of fitted constants applied over *q.  A bare
 * per-generation field name ("step_overhead_s", as files written before it
 * became per generation name it) sets that field for every generation, as
 * --params reads it; a "GEN.NAME" overrides it whatever the order: pass 0
 * applies the bare names, pass 1 the others. */
static planner_status apply_params(cost_params *q, const jsonin_doc *doc, json_t *root,
                                   planner_error *err)
{
    const jsonin_path rootp = JSONIN_PATH_ROOT, kp = jsonin_key(&rootp, "params");
    json_t *v = json_object_get(root, "params"), *pv;
    const char *key;
    planner_status st;
    int pass;

    if (v == NULL)
        return jsonin_fail(doc, &rootp, "missing \"params\" (an object of fitted constants)");
    if (!json_is_object(v))
        return jsonin_fail(doc, &kp, "expected an object of fitted constants");
    for (pass = 0; pass < 2; pass++) {
        json_object_foreach(v, key, pv) {
            jsonin_path pp = jsonin_key(&kp, key);
            if ((st = apply_param(q, doc, &pp, key, pv, pass, err)) != PLANNER_OK)
                return st;
        }
    }
    return PLANNER_OK;
}

planner_status calibration_load(cost_params *p, const char *path, planner_error *err)
{
    char *text = NULL;
    size_t len = 0;
    jsonin_doc doc = {path, NULL, 0, NULL, "", err};
    planner_status st;
    cost_params q = *p;

    if ((st = file_read_all(&text, &len, path, INPUT_MAX_BYTES, err)) != PLANNER_OK)
        return st;
    if ((st = jsonin_parse(&doc, text, len, path, NULL, err)) != PLANNER_OK)
        goto cleanup;
    if ((st = check_top(&doc, doc.root)) != PLANNER_OK)
        goto cleanup;
    if ((st = apply_params(&q, &doc, doc.root, err)) != PLANNER_OK)
        goto cleanup;
    *p = q;
cleanup:
    jsonin_close(&doc);
    pl_free(text);
    return st;
}

planner_status calibration_params(cost_params *p, const char *path, planner_error *err)
{
    cost_params_default(p);
    return path != NULL ? calibration_load(p, path, err) : PLANNER_OK;
}
