
@
x1Placeholder* 
shape:ÿÿÿÿÿÿÿÿÿ*
dtype0
@
x2Placeholder* 
shape:ÿÿÿÿÿÿÿÿÿ*
dtype0
5
zoo_multiply_1/multiply_1/MulMulx1x2*
T0
<
IdentityIdentityzoo_multiply_1/multiply_1/Mul*
T0"ª