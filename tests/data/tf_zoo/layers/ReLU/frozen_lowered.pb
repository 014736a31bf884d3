
;
xPlaceholder*
shape:ÿÿÿÿÿÿÿÿÿ*
dtype0
+
zoo_relu_1/re_lu_1/ReluRelux*
T0
6
IdentityIdentityzoo_relu_1/re_lu_1/Relu*
T0"ª