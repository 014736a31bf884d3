
@
x1Placeholder* 
shape:ÿÿÿÿÿÿÿÿÿ*
dtype0
@
x2Placeholder* 
shape:ÿÿÿÿÿÿÿÿÿ*
dtype0
;
zoo_minimum_1/minimum_1/MinimumMinimumx1x2*
T0
>
IdentityIdentityzoo_minimum_1/minimum_1/Minimum*
T0"ª