// A plate with holes and a rounded notch, for P1 triangles:
// gmsh -2 -setnumber h 0.02 plate.geo
SetFactory("OpenCASCADE");
DefineConstant[ h = {0.02, Name "mesh size"} ];
Rectangle(1) = {0, 0, 0, 4, 2, 0.3};
Disk(2) = {1, 1, 0, 0.35};
Disk(3) = {2.5, 0.7, 0, 0.25};
Disk(4) = {3.2, 1.4, 0, 0.3, 0.2};
Disk(5) = {2, 2, 0, 0.4};
BooleanDifference{ Surface{1}; Delete; }{ Surface{2, 3, 4, 5}; Delete; }
Mesh.CharacteristicLengthMax = h;
Mesh.CharacteristicLengthMin = h / 2;
Mesh.MshFileVersion = 2.2;
