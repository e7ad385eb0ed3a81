// A mounting plate for misgrid's pictures: rounded outer corners (fillets),
// three bolt holes, and a slot cut from the top edge whose sharp corners,
// two convex and two re-entrant, the coarse grids must keep.
//
//   gmsh -2 plate.geo -format msh41 -o plate.msh
//   go run ./cmd/misgrid coarsen -min_vertices 8 -o plate.png examples/meshes/plate.msh
SetFactory("OpenCASCADE");
Rectangle(1) = {0, 0, 0, 120, 80, 12};  // 120 x 80, corner radius 12
Disk(2) = {25, 40, 0, 12};
Disk(3) = {72, 22, 0, 8};
Disk(4) = {100, 52, 0, 9};
Rectangle(5) = {50, 45, 0, 16, 40};       // the slot, open at the top
BooleanDifference{ Surface{1}; Delete; }{ Surface{2, 3, 4, 5}; Delete; }
Mesh.MeshSizeMax = 3;
Mesh.MeshSizeMin = 1.5;
Mesh.MeshSizeFromCurvature = 12;          // elements per 2π of a hole
