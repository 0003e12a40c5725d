/* progress.c: calling the progress hook of progress.h (the library's side:
 * it reports, the caller draws). */
#include <stddef.h>
#include "base/progress.h"

void progress_report(const progress_hook *h, long done, long total)
{
    if (h != NULL && h->update != NULL)
        h->update(h->ctx, done, total);
}
