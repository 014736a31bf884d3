
@
x1Placeholder* 
shape:ÿÿÿÿÿÿÿÿÿ*
dtype0
@
x2Placeholder* 
shape:ÿÿÿÿÿÿÿÿÿ*
dtype0
5
zoo_subtract_1/subtract_1/SubSubx1x2*
T0
<
IdentityIdentityzoo_subtract_1/subtract_1/Sub*
T0"ª