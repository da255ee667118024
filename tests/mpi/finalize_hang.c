/* The smallest program that shows issue 31's hang, outside paes: MPI_Finalize
 * never returns on one rank after a complete job, with MPICH 4.0.2 over UCX
 * 1.13's TCP transport (CLUSTER.md, "Jobs that hung after they were done").
 *
 *   mpicc.mpich -O2 -pthread -o finalize_hang tests/mpi/finalize_hang.c
 *   for i in $(seq 20); do timeout -s KILL 10 mpiexec.mpich -genv UCX_TLS tcp,self \
 *       -genv MPIR_CVAR_NOLOCAL 1 -n 3 ./finalize_hang || echo hung; done
 *
 * Every rank sends one byte to every other, then all meet in a barrier and
 * finalize (on a loaded 2-core VM, 9 of 20 runs hung; with no message at all,
 * 0 of 20). One rank spins in ucp_worker_progress() under MPI_Finalize waiting
 * for its endpoints' closes; the others wait in the PMI barrier that follows
 * the closes, and progress nothing. With an argument, "unstick", each rank
 * shuts its TCP connections down 1 s into MPI_Finalize, as paes does
 * (FinalizeDeadline in src/engine/mpi/mpi_session.cpp): 0 of 30 hung. */
#include <dirent.h>
#include <mpi.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static ino_t inherited[64];
static int n_inherited;

static int inet_socket(int fd, ino_t *inode) {
  int domain = 0;
  socklen_t len = sizeof domain;
  struct stat st;
  if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 || (domain != AF_INET && domain != AF_INET6))
    return 0;
  if (fstat(fd, &st) != 0) return 0;
  *inode = st.st_ino;
  return 1;
}

/* Not the launcher's sockets (inherited), nor listening ones. */
static void *unstick(void *unused) {
  (void)unused;
  sleep(1);
  DIR *dir = opendir("/proc/self/fd");
  for (struct dirent *e; dir && (e = readdir(dir));) {
    int fd = atoi(e->d_name), listening = 0, skip = 0;
    socklen_t len = sizeof listening;
    ino_t inode;
    if (e->d_name[0] == '.' || fd == dirfd(dir) || !inet_socket(fd, &inode)) continue;
    for (int k = 0; k < n_inherited; ++k) skip |= inherited[k] == inode;
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) == 0 && listening) skip = 1;
    if (!skip) shutdown(fd, SHUT_RDWR);
  }
  if (dir) closedir(dir);
  return NULL;
}

int main(int argc, char **argv) {
  const int unstick_finalize = argc > 1 && strcmp(argv[1], "unstick") == 0;
  for (int fd = 0; fd < 1024 && n_inherited < 64; ++fd) {
    ino_t inode;
    if (inet_socket(fd, &inode)) inherited[n_inherited++] = inode;
  }
  int provided, rank, size;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char out = 1, in[size];
  MPI_Request requests[2 * size];
  int n = 0;
  for (int r = 0; r < size; ++r) {
    if (r == rank) continue;
    MPI_Irecv(&in[r], 1, MPI_CHAR, r, 7, MPI_COMM_WORLD, &requests[n++]);
    MPI_Isend(&out, 1, MPI_CHAR, r, 7, MPI_COMM_WORLD, &requests[n++]);
  }
  MPI_Waitall(n, requests, MPI_STATUSES_IGNORE);
  MPI_Barrier(MPI_COMM_WORLD);
  if (unstick_finalize) {
    pthread_t thread;
    pthread_create(&thread, NULL, unstick, NULL);
    pthread_detach(thread);
  }
  MPI_Finalize();
  return 0;
}
