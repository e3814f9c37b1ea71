/* One piece of work on a thread of its own (include/pairbound/job.h). */
#include "config.h"

#include "pairbound/job.h"

static void *pb_job__main(void *arg)
{
  struct pb_job *job = arg;
  job->fn(job->arg);
  return NULL;
}

void pb_job_start(struct pb_job *job, void (*fn)(void *), void *arg)
{
  job->fn = fn;
  job->arg = arg;
  job->running = pthread_create(&job->thread, NULL, pb_job__main, job) == 0;
  if (!job->running) fn(arg);
}

void pb_job_join(struct pb_job *job)
{
  if (job->running) pthread_join(job->thread, NULL);
  job->running = 0;
}
