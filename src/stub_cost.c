/* TEMPORARY stubs so the tree links; the cost-model work replaces them. */
#include <string.h>
#include "cost.h"

void cost_params_default(cost_params *p) { memset(p, 0, sizeof *p); }
void evaluate(const model *m, const cluster *c, const cost_params *p,
              const strategy *s, evaluation *out)
{
    (void)m; (void)c; (void)p; (void)s;
    memset(out, 0, sizeof *out);
}
int strategy_check(const model *m, const strategy *s, char *why, int why_size)
{
    (void)m; (void)s; (void)why; (void)why_size;
    return 0;
}
