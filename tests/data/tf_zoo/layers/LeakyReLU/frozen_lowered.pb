
;
xPlaceholder*
shape:ÿÿÿÿÿÿÿÿÿ*
dtype0
P
'zoo_leakyrelu_1/leaky_re_lu_1/LeakyRelu	LeakyRelux*
alpha%ÍÌL>*
T0
F
IdentityIdentity'zoo_leakyrelu_1/leaky_re_lu_1/LeakyRelu*
T0"ª