
@
x1Placeholder* 
shape:ÿÿÿÿÿÿÿÿÿ*
dtype0
@
x2Placeholder* 
shape:ÿÿÿÿÿÿÿÿÿ*
dtype0
-
zoo_add_1/add_1/AddAddV2x1x2*
T0
2
IdentityIdentityzoo_add_1/add_1/Add*
T0"ª