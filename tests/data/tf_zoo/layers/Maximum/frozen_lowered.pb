
@
x1Placeholder* 
shape:ÿÿÿÿÿÿÿÿÿ*
dtype0
@
x2Placeholder* 
shape:ÿÿÿÿÿÿÿÿÿ*
dtype0
;
zoo_maximum_1/maximum_1/MaximumMaximumx1x2*
T0
>
IdentityIdentityzoo_maximum_1/maximum_1/Maximum*
T0"ª