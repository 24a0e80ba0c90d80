/* The message floor of a 27-point ghost update at 8^3 on 2 ranks (2x1x1):
 * what one exchange of the bytes that cross to the other rank costs as one
 * message each way (PETSc's VecScatter sends one per partner) against two
 * (our torus round along the split dimension: x+e and x-e are the same
 * process, each its own message). Plain MPI, the same barrier-then-time
 * method as isostencil-bench-petsc, the contenders taking turns.
 *   mpicc -O2 message_floor.c -o message_floor && mpirun -np 2 ./message_floor
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
/* 2 ranks: per rep, barrier, then exchange; median over reps of max over ranks */
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int c,char**v){MPI_Init(&c,&v);int r;MPI_Comm_rank(MPI_COMM_WORLD,&r);int p=1-r;
 enum{R=4000}; static double t[6][R]; static char sb[2][8192], rb[2][8192];
 const char*names[6]={"1x1600 fresh","2x800 fresh","1x1600 persistent","2x800 persistent","copy 1600B local (memcpy)","barrier only"};
 MPI_Request pr1[2],pr2[4];
 MPI_Recv_init(rb[0],1600,MPI_BYTE,p,1,MPI_COMM_WORLD,&pr1[0]);MPI_Send_init(sb[0],1600,MPI_BYTE,p,1,MPI_COMM_WORLD,&pr1[1]);
 MPI_Recv_init(rb[0],800,MPI_BYTE,p,2,MPI_COMM_WORLD,&pr2[0]);MPI_Recv_init(rb[1],800,MPI_BYTE,p,3,MPI_COMM_WORLD,&pr2[1]);
 MPI_Send_init(sb[0],800,MPI_BYTE,p,3,MPI_COMM_WORLD,&pr2[2]);MPI_Send_init(sb[1],800,MPI_BYTE,p,2,MPI_COMM_WORLD,&pr2[3]);
 for(int rep=0;rep<R;rep++) for(int k=0;k<6;k++){
  int kk=(k+rep)%6; MPI_Barrier(MPI_COMM_WORLD); double s=MPI_Wtime();
  MPI_Request q[4];
  switch(kk){
   case 0: MPI_Irecv(rb[0],1600,MPI_BYTE,p,1,MPI_COMM_WORLD,&q[0]);MPI_Isend(sb[0],1600,MPI_BYTE,p,1,MPI_COMM_WORLD,&q[1]);MPI_Waitall(2,q,MPI_STATUSES_IGNORE);break;
   case 1: MPI_Irecv(rb[0],800,MPI_BYTE,p,2,MPI_COMM_WORLD,&q[0]);MPI_Irecv(rb[1],800,MPI_BYTE,p,3,MPI_COMM_WORLD,&q[1]);MPI_Isend(sb[0],800,MPI_BYTE,p,3,MPI_COMM_WORLD,&q[2]);MPI_Isend(sb[1],800,MPI_BYTE,p,2,MPI_COMM_WORLD,&q[3]);MPI_Waitall(4,q,MPI_STATUSES_IGNORE);break;
   case 2: MPI_Startall(2,pr1);MPI_Waitall(2,pr1,MPI_STATUSES_IGNORE);break;
   case 3: MPI_Startall(4,pr2);MPI_Waitall(4,pr2,MPI_STATUSES_IGNORE);break;
   case 4: memcpy(rb[1],sb[1],1600);break;
   case 5: break;
  }
  double e=MPI_Wtime()-s; MPI_Allreduce(MPI_IN_PLACE,&e,1,MPI_DOUBLE,MPI_MAX,MPI_COMM_WORLD); t[kk][rep]=e;}
 if(r==0) for(int k=0;k<6;k++){qsort(t[k],R,sizeof(double),cmp);printf("%-28s median %.2f us  p10 %.2f us\n",names[k],t[k][R/2]*1e6,t[k][R/10]*1e6);}
 MPI_Finalize();}
