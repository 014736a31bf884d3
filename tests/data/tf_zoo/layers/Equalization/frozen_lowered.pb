
C
xPlaceholder*
dtype0*$
shape:ÿÿÿÿÿÿÿÿÿ
 
IdentityIdentityx*
T0"ª